"""Hand-written contact-center calls for the verifier benchmark, with what a judge might wrongly cite.

Each call has its own speaker labels; turns are (role, text) with role "a" (agent) or "c" (customer).
``paraphrases`` say what was said in other words; ``absences`` describe something the call lacks.
Neither is in the transcript word for word: both must be refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Call:
    name: str
    language: str  # "es" or "en"
    labels: dict[str, str]  # role -> the transcript's label
    turns: tuple[tuple[str, str], ...]
    paraphrases: tuple[str, ...] = ()
    absences: tuple[str, ...] = ()


CALLS = (
    Call(
        name="es-facturacion",
        language="es",
        labels={"a": "AGENTE", "c": "CLIENTE"},
        turns=(
            ("a", "Buenas tardes, le habla Mariana de Telecom Norte. ¿En qué puedo ayudarle?"),
            ("c", "Hola, llamo porque me cobraron dos veces la factura de octubre."),
            ("c", "Ya hice el reclamo la semana pasada y nadie me respondió."),
            ("a", "Entiendo, disculpe las molestias. ¿Me confirma su número de documento?"),
            ("c", "Sí, es el 30.456.789 y la cuenta está a nombre de Laura Giménez."),
            ("a", "Gracias, Laura. Veo el doble cobro de 4.500 pesos en su cuenta."),
            ("c", "¿Y me lo van a devolver? Porque ya pagué y encima me lo cobraron otra vez."),
            ("a", "Sí, le generé el reclamo número 88123 y el reintegro se acredita en cinco días hábiles."),
            ("c", "¿Me mandan el comprobante por correo?"),
            ("a", "Sí, te lo mando hoy antes de las 18 por correo, con el número de reclamo."),
            ("c", "Perfecto. Mi correo es laura punto gimenez arroba correo punto com."),
            ("a", "Lo tengo registrado. Además le aplico un crédito de 500 pesos por las molestias."),
            ("c", "Bueno, muchas gracias. No quiero que vuelva a pasar."),
            ("a", "Dejé una nota para que facturación revise la cuenta el mes que viene."),
            ("c", "Está bien. ¿Necesitan algo más de mí?"),
            ("a", "No, eso es todo. ¿Hay algo más en lo que pueda ayudarle?"),
            ("c", "No, gracias, Mariana. Que tenga buena tarde."),
            ("a", "Gracias a usted por llamar a Telecom Norte. Hasta luego."),
        ),
        paraphrases=(
            "Le voy a enviar el comprobante hoy por correo electrónico antes de las seis.",
            "El reintegro se va a acreditar en cinco días.",
            "Me cobraron la factura de octubre dos veces.",
            "Le aplico un descuento de 500 pesos por el inconveniente.",
            "Ya reclamé la semana pasada pero nadie me contestó.",
        ),
        absences=(
            "El agente no ofreció un plazo concreto para el reintegro.",
            "La agente no verificó la identidad de la clienta.",
            "No se mencionó ningún número de reclamo.",
        ),
    ),
    Call(
        name="es-envio",
        language="es",
        labels={"a": "OPERADOR", "c": "USUARIA"},
        turns=(
            ("a", "Mensajería Rápida, buenos días, habla Tomás. ¿Me dice su número de seguimiento?"),
            ("c", "Buen día. Es el RX 4471 9902, un paquete que tenía que llegar el martes."),
            ("a", "Un momento que lo busco en el sistema."),
            ("a", "Listo, lo encontré. El paquete quedó retenido en el centro de distribución de Córdoba."),
            ("c", "¿Retenido por qué? Nadie me avisó nada."),
            ("a", "Figura una dirección incompleta: falta el número de departamento."),
            ("c", "Es el 4° B. Lo puse cuando hice la compra, estoy segura."),
            ("a", "Le pido disculpas. Ya corregí la dirección y agregué el 4° B."),
            ("a", "El envío sale mañana a primera hora y debería llegarle el jueves entre las 9 y las 13."),
            ("c", "¿Y si no estoy en casa el jueves?"),
            ("a", "El repartidor deja un aviso y puede retirarlo en la sucursal de Avenida Colón durante 10 días."),
            ("c", "Bien. ¿Me pueden avisar por mensaje cuando salga?"),
            ("a", "Sí, le va a llegar un SMS con el horario estimado el mismo jueves a la mañana."),
            ("c", "Gracias. La verdad es la segunda vez que me pasa con ustedes."),
            ("a", "Lo entiendo, y dejo registrada su queja para que la revise el supervisor."),
            ("c", "Está bien, gracias Tomás."),
            ("a", "Gracias por comunicarse con Mensajería Rápida, que tenga un buen día."),
        ),
        paraphrases=(
            "El paquete va a llegar el jueves por la mañana.",
            "Su envío estaba detenido en Córdoba por un error en la dirección.",
            "Puede ir a buscarlo a la sucursal de Colón durante diez días.",
            "Le mandamos un mensaje de texto cuando salga el paquete.",
            "Le corregí la dirección del envío.",
        ),
        absences=(
            "El operador no pidió disculpas por la demora.",
            "No se ofreció ninguna compensación a la usuaria.",
            "El operador no confirmó la nueva fecha de entrega.",
        ),
    ),
    Call(
        name="es-soporte",
        language="es",
        labels={"a": "Agente", "c": "Cliente"},
        turns=(
            ("a", "Soporte técnico de FibraSur, le atiende Lucía. ¿En qué le ayudo?"),
            ("c", "Hola, no tengo internet desde ayer a la noche y trabajo desde casa."),
            ("a", "Lamento el inconveniente. ¿Me indica la dirección del servicio?"),
            ("c", "Pasaje Los Álamos 1520, en Villa María."),
            ("a", "Veo que hay un corte masivo en su zona por un cable dañado."),
            ("a", "Los técnicos están trabajando y estimamos que se restablezca hoy a las 20 horas."),
            ("c", "¿Hoy a las 20? Necesito conexión para una reunión a las 15."),
            ("a", "Entiendo. Puedo activarle 10 GB de datos móviles sin cargo mientras dura el corte."),
            ("c", "Sí, por favor, actívelos en la línea que termina en 3344."),
            ("a", "Listo, ya están activos y vencen en 48 horas."),
            ("c", "¿Y me van a descontar los días sin servicio?"),
            ("a", "Sí, se le bonifican dos días de abono en la próxima factura de forma automática."),
            ("c", "Bueno. ¿Me avisan cuando vuelva el servicio?"),
            ("a", "Le enviamos un mensaje apenas quede restablecido. Si mañana sigue sin conexión, llámenos y agendamos una visita técnica."),
            ("c", "Perfecto, muchas gracias Lucía."),
            ("a", "A usted. Que tenga buena tarde."),
        ),
        paraphrases=(
            "El servicio vuelve esta noche a las ocho.",
            "Le regalo datos móviles mientras no tenga internet.",
            "Le vamos a descontar los días sin servicio de la factura.",
            "Hay un corte general en la zona por un cable roto.",
            "Si mañana sigue sin internet le mandamos un técnico.",
        ),
        absences=(
            "La agente no ofreció ninguna alternativa de conexión.",
            "No se informó un horario estimado de restablecimiento.",
            "La agente no preguntó la dirección del cliente.",
        ),
    ),
    Call(
        name="en-card",
        language="en",
        labels={"a": "AGENT", "c": "CUSTOMER"},
        turns=(
            ("a", "Thank you for calling Northwind Bank, this is Sam. How can I help you today?"),
            ("c", "Hi, I'd like to dispute a charge of $49.99 from last Tuesday."),
            ("a", "I'm sorry to hear that. Can you confirm the last four digits of your card?"),
            ("c", "It's 4821."),
            ("a", "Thanks. I see a charge from StreamPlus for $49.99 on March 12."),
            ("c", "I cancelled that subscription in February, so I shouldn't have been charged."),
            ("a", "I've opened a dispute and you'll get an e-mail within 24 hours with the case number."),
            ("a", "While we investigate, I'm issuing a temporary credit of $49.99 to your account."),
            ("c", "Great. I don't want to be charged again next month."),
            ("a", "I won't let that happen: I've blocked future payments to StreamPlus on this card."),
            ("c", "How long does the investigation usually take?"),
            ("a", "Most disputes are resolved within 10 business days."),
            ("c", "Okay, that works for me."),
            ("a", "Is there anything else I can help you with today?"),
            ("c", "No, that's all. Thank you, Sam."),
            ("a", "You're welcome. Have a great day."),
        ),
        paraphrases=(
            "The agent promised an email with the case number within a day.",
            "I'll give you a provisional refund while we look into it.",
            "Future charges from that merchant are blocked.",
            "Disputes usually take about two weeks to resolve.",
            "The customer said she had cancelled the subscription last month.",
        ),
        absences=(
            "The agent did not provide a specific timeframe.",
            "The agent never verified the customer's identity.",
            "No temporary credit was offered.",
        ),
    ),
    Call(
        name="en-claim",
        language="en",
        labels={"a": "agent", "c": "caller"},
        turns=(
            ("a", "Good morning, Harbor Mutual claims, my name is Priya. Are you calling about an existing claim?"),
            ("c", "Yes, claim number 7730-215. My car was hit in a parking lot two weeks ago."),
            ("a", "Let me pull that up. I see the adjuster inspected the vehicle on the 3rd."),
            ("c", "Right, and since then I haven't heard anything."),
            ("a", "The estimate came in at $2,340 and it was approved yesterday."),
            ("c", "So when can I take the car to the shop?"),
            ("a", "You can book the repair at any of our partner shops starting Monday."),
            ("a", "Your deductible is $500, which you'll pay directly to the shop."),
            ("c", "Will I get a rental car while it's being repaired?"),
            ("a", "Your policy covers a rental for up to 14 days, at $35 per day."),
            ("c", "That's good. Can you send me the list of partner shops?"),
            ("a", "Sure, I'll text it to the number on file, the one ending in 0917."),
            ("c", "Perfect. And the other driver's insurance, are they paying?"),
            ("a", "We're pursuing them for the full amount, including your deductible, but that can take a few months."),
            ("c", "Understood. Thanks for your help, Priya."),
            ("a", "My pleasure. Good luck with the repair."),
        ),
        paraphrases=(
            "The repair estimate of $2,340 has been approved.",
            "You'll have a rental car for two weeks.",
            "I will send you the partner shops by text message.",
            "Your deductible is five hundred dollars.",
            "We are going after the other insurer to recover your deductible.",
        ),
        absences=(
            "The agent did not explain the deductible.",
            "The caller was not offered a rental car.",
            "No timeline was given for the repair.",
        ),
    ),
    Call(
        name="en-airline",
        language="en",
        labels={"a": "Speaker 1", "c": "Speaker 2"},
        turns=(
            ("a", "SkyWest reservations, this is Daniel speaking."),
            ("c", "Hi Daniel, my flight to Denver was cancelled and I need to get there by tomorrow night."),
            ("a", "I'm sorry about that. Can I have your confirmation code?"),
            ("c", "It's K7QX2M."),
            ("a", "Thank you, Ms. Alvarez. I can rebook you on flight 1184, leaving tomorrow at 7:45 a.m."),
            ("c", "Is there anything later? I can't make it to the airport that early."),
            ("a", "There's flight 1190 at 2:10 p.m., but it only has middle seats left."),
            ("c", "A middle seat is fine, as long as I land before 6."),
            ("a", "Flight 1190 arrives in Denver at 5:20 p.m. local time."),
            ("c", "Great, please book that one."),
            ("a", "Done. Since the cancellation was on our side, there's no change fee and I'm adding a $100 travel voucher."),
            ("c", "Oh, thank you. Will my checked bag be transferred automatically?"),
            ("a", "Yes, your bag is already tagged through to Denver."),
            ("c", "And the hotel for tonight?"),
            ("a", "I've booked you a room at the Airport Inn and sent the voucher to your e-mail."),
            ("c", "Thank you so much, Daniel. You've been very helpful."),
            ("a", "You're welcome, and again, sorry for the trouble."),
        ),
        paraphrases=(
            "You're rebooked on the afternoon flight to Denver.",
            "There will be no fee to change the flight.",
            "I'm giving you a 100 dollar voucher for the inconvenience.",
            "Your luggage will go straight through to Denver.",
            "We've put you up at the airport hotel tonight.",
        ),
        absences=(
            "The agent did not offer any compensation.",
            "The agent did not mention the baggage.",
            "No alternative flight was offered.",
        ),
    ),
)

# Sentences no call contains: appended or prepended to a real quote, they make it a fabrication.
FABRICATED = {
    "es": (
        "Además le hacemos un descuento del 20% en la próxima factura.",
        "Le garantizo que no va a volver a pasar.",
        "Le pido disculpas en nombre de toda la empresa.",
        "Su caso queda resuelto en este momento.",
        "Un supervisor lo va a llamar mañana a primera hora.",
        "No se preocupe, todo está solucionado.",
    ),
    "en": (
        "Your refund is guaranteed within 24 hours.",
        "I apologize on behalf of the whole company.",
        "A supervisor will call you back tomorrow morning.",
        "This will never happen again, I promise.",
        "Your case is now fully resolved.",
        "There is no need to call us again.",
    ),
}

NEGATION = {"es": "no", "en": "not"}

# Turns of the 60-minute recordings besides the calls' own: slots are filled at random, so each
# recording has many distinct numbers, names and dates, as a long real call does.
TEMPLATES = {
    "es": (
        ("a", "Le confirmo que el pedido {num} sale el {day} y llega antes de las {hour}."),
        ("c", "Necesito que me devuelvan los {amount} pesos que me cobraron de más."),
        ("a", "Su saldo actual es de {amount} pesos y vence el {day}."),
        ("c", "Ya llamé {small} veces por lo mismo y nadie me solucionó nada."),
        ("a", "Le dejo registrado el reclamo {num} para que lo revise el área técnica."),
        ("c", "Mi número de cliente es {num} y el titular es {name}."),
        ("a", "Le ofrezco un descuento del {small}0 por ciento durante {small} meses."),
        ("c", "¿Puedo pagar en {small} cuotas sin interés?"),
        ("a", "El técnico lo visita el {day} entre las {hour} y las {hour2}."),
        ("c", "Perfecto, el {day} estoy en casa toda la mañana."),
        ("a", "Disculpe la espera, estoy revisando el historial de su cuenta."),
        ("c", "¿Me lo pueden enviar por correo a nombre de {name}?"),
        ("a", "Sí, {name}, queda confirmado y le llega un correo con el detalle."),
        ("c", "No entiendo por qué la factura de {month} vino tan alta."),
        ("a", "En {month} se le cobró el cargo de instalación de {amount} pesos."),
        ("c", "Eso no lo pedí yo, nunca acepté ninguna instalación."),
        ("a", "Tiene razón, lo anulo y en la factura de {month} le aparece el crédito."),
        ("c", "¿Cuánto tiempo tarda en verse reflejado?"),
        ("a", "Entre {small} y {small2} días hábiles según su banco."),
        ("c", "Bueno, espero que esta vez sí lo resuelvan."),
        ("a", "¿Me repite el código que le llegó por mensaje, por favor?"),
        ("c", "Es {num}, me llegó hace un minuto."),
        ("a", "Gracias, {name}. Ya validé su identidad."),
        ("c", "También quería saber si puedo cambiar el plan a uno de {small}0 megas."),
        ("a", "Sí, el plan de {small}0 megas cuesta {amount} pesos por mes con el descuento."),
    ),
    "en": (
        ("a", "I can confirm that order {num} ships on {day} and arrives before {hour} p.m."),
        ("c", "I need the {amount} dollars you overcharged me to be refunded."),
        ("a", "Your current balance is {amount} dollars and it's due on {day}."),
        ("c", "I've called {small} times about this and nobody fixed anything."),
        ("a", "I'm logging ticket {num} so the technical team can review it."),
        ("c", "My account number is {num} and it's under {name}."),
        ("a", "I can offer you {small}0 percent off for the next {small2} months."),
        ("c", "Can I pay it in {small} installments without interest?"),
        ("a", "The technician will visit on {day} between {hour} and {hour2}."),
        ("c", "Perfect, I'm home all morning on {day}."),
        ("a", "Sorry for the wait, I'm going through your account history."),
        ("c", "Can you send it by e-mail to {name}, please?"),
        ("a", "Yes, {name}, that's confirmed and you'll get an e-mail with the details."),
        ("c", "I don't understand why the {month} bill was so high."),
        ("a", "In {month} you were charged an installation fee of {amount} dollars."),
        ("c", "I never asked for that, I never agreed to any installation."),
        ("a", "You're right, I'm reversing it and you'll see the credit on the {month} bill."),
        ("c", "How long does it take to show up?"),
        ("a", "Between {small} and {small2} business days depending on your bank."),
        ("c", "Well, I hope you actually fix it this time."),
        ("a", "Could you read me the code we just texted you, please?"),
        ("c", "It's {num}, it came in a minute ago."),
        ("a", "Thanks, {name}. Your identity is verified."),
        ("c", "I also wanted to ask about switching to the {small}00 megabit plan."),
        ("a", "Yes, the {small}00 megabit plan is {amount} dollars a month with the discount."),
    ),
}

SLOTS = {
    "es": {
        "day": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado"),
        "month": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre"),
        "name": ("Laura Giménez", "José Pérez", "María Núñez", "Andrés Rodríguez", "Sofía Ibáñez", "Raúl Gómez"),
    },
    "en": {
        "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"),
        "month": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October"),
        "name": ("Laura Smith", "José Pérez", "Mary O'Neil", "Andrew Brown", "Sophie Müller", "Raj Patel"),
    },
}
